//! The measures a [`crate::Spec`] can name, for listing: ids, output keys and parameters (a
//! read-only view of the registry; the registry itself stays internal).

use crate::measures::{MeasureDef, ParamDef, ParamKind, REGISTRY};

/// Every implemented measure, in the registry's order (ZADU's).
///
/// ```
/// let tnc = faithful::measures().find(|m| m.id() == "tnc").unwrap();
/// assert_eq!(tnc.zadu_id(), "trustworthiness_continuity");
/// assert_eq!(tnc.keys(), ["trustworthiness", "continuity"]);
/// assert_eq!(tnc.params().map(|p| (p.name(), p.default())).collect::<Vec<_>>(), [("k", "20")]);
/// ```
pub fn measures() -> impl Iterator<Item = MeasureInfo> {
    REGISTRY.iter().map(|def| MeasureInfo { def })
}

/// One measure of [`measures`].
#[derive(Debug, Clone, Copy)]
pub struct MeasureInfo {
    def: &'static MeasureDef,
}

impl MeasureInfo {
    /// The ZADU alias a spec names (`tnc`).
    pub fn id(&self) -> &'static str {
        self.def.id
    }
    /// ZADU's full id (`trustworthiness_continuity`); a spec may name it too.
    pub fn zadu_id(&self) -> &'static str {
        self.def.zadu_id
    }
    /// One line on what the measure scores.
    pub fn about(&self) -> &'static str {
        self.def.about
    }
    /// The output keys of [`crate::Score::value`] with the default parameters, in ZADU's order
    /// (`ivm` and `c_evm` name their one key after their parameters).
    pub fn keys(&self) -> &'static [&'static str] {
        self.def.keys
    }
    /// The keys of per-point values ([`crate::Score::local`]); empty when the measure has none.
    pub fn local_keys(&self) -> &'static [&'static str] {
        self.def.local_keys
    }
    /// The least number of label classes it needs; 0 when it needs no labels.
    pub fn min_classes(&self) -> usize {
        self.def.min_classes
    }
    /// Its parameters, in declaration order.
    pub fn params(&self) -> impl Iterator<Item = ParamInfo> + use<> {
        self.def.params.iter().map(|def| ParamInfo { def })
    }
}

/// One parameter of a [`MeasureInfo`].
#[derive(Debug, Clone, Copy)]
pub struct ParamInfo {
    def: &'static ParamDef,
}

impl ParamInfo {
    /// Its name in a spec (`k` in `tnc:k=10`).
    pub fn name(&self) -> &'static str {
        self.def.name
    }
    /// Its default, as a spec writes it.
    pub fn default(&self) -> &'static str {
        self.def.default
    }
    /// The values it accepts, when it is a choice from a fixed set; for snc's
    /// `clustering_strategy`, the named ones (it also accepts ZADU's `<k>-means`).
    pub fn choices(&self) -> Option<&'static [&'static str]> {
        match self.def.kind {
            ParamKind::Choice(c) | ParamKind::Clustering(c) => Some(c),
            _ => None,
        }
    }
}

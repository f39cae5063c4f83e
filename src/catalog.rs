//! The measures a [`crate::Spec`] can name, for listing: ids, output keys and parameters (a
//! read-only view of the registry; the registry itself stays internal).

use crate::measures::{LocalKind, MeasureDef, ParamDef, ParamKind, REGISTRY};

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
    pub fn local_keys(&self) -> Vec<&'static str> {
        self.def.local_keys().collect()
    }
    /// The per-point outputs with what their values mean, in declaration order.
    ///
    /// ```
    /// use faithful::LocalKind;
    /// let tnc = faithful::measures().find(|m| m.id() == "tnc").unwrap();
    /// assert_eq!(tnc.local()[0], ("local_trustworthiness", LocalKind::Mean));
    /// ```
    pub fn local(&self) -> Vec<(&'static str, LocalKind)> {
        self.def.local.iter().map(|l| (l.key, l.kind)).collect()
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

impl MeasureInfo {
    /// This measure as `faithful measures --json` lists it: `{"id", "zadu_id", "params":
    /// [{"name", "kind", "default", "required", "choices", "open"}], "keys", "local": [{"key", "kind"}],
    /// "labels", "min_classes", "description"}`. A parameter's `kind` is `int`, `float` or
    /// `choice`; `open` marks a choice that also takes other values (snc's `<k>-means`).
    pub fn to_json(&self) -> serde_json::Value {
        let d = self.def;
        let params: Vec<serde_json::Value> = d
            .params
            .iter()
            .map(|p| {
                let (kind, choices, open): (&str, &[&str], bool) = match p.kind {
                    ParamKind::Int | ParamKind::Count | ParamKind::Seed(_) => ("int", &[], false),
                    ParamKind::Float | ParamKind::PositiveFloat | ParamKind::UnitFloat => ("float", &[], false),
                    ParamKind::Choice(c) => ("choice", c, false),
                    ParamKind::Clustering(c) => ("choice", c, true),
                };
                serde_json::json!({
                    "name": p.name, "kind": kind, "default": p.default, "required": p.default.is_empty(),
                    "choices": choices, "open": open,
                })
            })
            .collect();
        let local: Vec<serde_json::Value> =
            d.local.iter().map(|l| serde_json::json!({"key": l.key, "kind": l.kind.name()})).collect();
        serde_json::json!({
            "id": d.id,
            "zadu_id": d.zadu_id,
            "params": params,
            "keys": d.keys,
            "local": local,
            "labels": d.min_classes > 0,
            "min_classes": d.min_classes,
            "description": d.about,
        })
    }
}

/// Every measure as `faithful measures --json` prints it: a JSON array of
/// [`MeasureInfo::to_json`], in the registry's order.
///
/// ```
/// let list: serde_json::Value = serde_json::from_str(&faithful::measures_json()).unwrap();
/// let tnc = &list[0];
/// assert_eq!(tnc["id"], "tnc");
/// assert_eq!(tnc["local"][1]["key"], "local_continuity");
/// assert_eq!(tnc["local"][1]["kind"], "mean");
/// ```
pub fn measures_json() -> String {
    let list: Vec<serde_json::Value> = measures().map(|m| m.to_json()).collect();
    serde_json::to_string(&list).expect("JSON values serialise")
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
    /// Its default, as a spec writes it; empty for a parameter a spec must give
    /// ([`ParamInfo::required`]).
    pub fn default(&self) -> &'static str {
        self.def.default
    }
    /// Whether a spec must give it (it has no default: cca_stress's `lambda`).
    pub fn required(&self) -> bool {
        self.def.default.is_empty()
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

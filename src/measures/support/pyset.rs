//! The iteration order of a CPython (3.11) `set` of small non-negative integers, which ZADU's
//! steadiness & cohesiveness turns into the order of an extracted cluster's points
//! (`np.array(list(cluster_member))`), and with it HDBSCAN's input order.
//!
//! An int hashes to itself; the table starts at 8 slots, probes 9 slots linearly and then
//! perturbs (`i = 5i + 1 + perturb`, `perturb >>= 5`), and grows to the smallest power of two
//! above 4·used (2·used past 50 000) when 5·fill ≥ 3·mask, re-inserting in table order.

const LINEAR_PROBES: usize = 9;
const PERTURB_SHIFT: u32 = 5;

/// An insert-only set with CPython's table layout.
pub(in crate::measures) struct PySet {
    table: Vec<Option<u32>>,
    used: usize,
}

impl PySet {
    pub(in crate::measures) fn new() -> Self {
        PySet { table: vec![None; 8], used: 0 }
    }

    /// `set.add(key)`.
    pub(in crate::measures) fn add(&mut self, key: u32) {
        let mask = self.table.len() - 1;
        let mut perturb = key as usize;
        let mut i = key as usize & mask;
        loop {
            let probes = if i + LINEAR_PROBES <= mask { LINEAR_PROBES } else { 0 };
            for e in i..=i + probes {
                match self.table[e] {
                    Some(k) if k == key => return,
                    Some(_) => {}
                    None => {
                        self.table[e] = Some(key);
                        self.used += 1;
                        // No deletions, so fill == used.
                        if self.used * 5 >= mask * 3 {
                            let grow = if self.used > 50_000 { self.used * 2 } else { self.used * 4 };
                            self.resize(grow);
                        }
                        return;
                    }
                }
            }
            perturb >>= PERTURB_SHIFT;
            i = (i * 5 + 1 + perturb) & mask;
        }
    }

    /// `set_table_resize` followed by `set_insert_clean` of every key in table order.
    fn resize(&mut self, min_used: usize) {
        let mut size = 8;
        while size <= min_used {
            size <<= 1;
        }
        let old = std::mem::replace(&mut self.table, vec![None; size]);
        let mask = size - 1;
        for key in old.into_iter().flatten() {
            let mut perturb = key as usize;
            let mut i = key as usize & mask;
            'probe: loop {
                let probes = if i + LINEAR_PROBES <= mask { LINEAR_PROBES } else { 0 };
                for e in i..=i + probes {
                    if self.table[e].is_none() {
                        self.table[e] = Some(key);
                        break 'probe;
                    }
                }
                perturb >>= PERTURB_SHIFT;
                i = (i * 5 + 1 + perturb) & mask;
            }
        }
    }

    pub(in crate::measures) fn len(&self) -> usize {
        self.used
    }

    /// `list(set)`.
    pub(in crate::measures) fn to_vec(&self) -> Vec<u32> {
        self.table.iter().flatten().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `list(s)` after `s = {41}; s.add(x) for x in [...]` in CPython 3.11 (printed by the
    /// interpreter): small tables, a resize, and keys colliding on their low bits.
    #[test]
    fn matches_cpython_order() {
        let mut s = PySet::new();
        for x in [41u32, 7, 15, 23, 41, 1000, 8, 16, 3, 99, 31, 64, 128, 5] {
            s.add(x);
        }
        assert_eq!(s.to_vec(), vec![64, 128, 3, 99, 5, 7, 1000, 41, 8, 15, 16, 23, 31]);
        assert_eq!(s.len(), 13);
    }
}

//! Wilkinson & Anand's graph-theoretic scagnostics of binned points (`Triangulation.compute` of
//! the scagnostics code that R's `scagnostics` and pyscagnostics 0.1.0a4 run), restated in Rust
//! with the reference's data structures, list orders and floating-point operations, so that its
//! results are reproduced to the last bit:
//!
//! 1. An incremental Delaunay triangulation (Apel's, with its edge lists and hull links) of the
//!    bin centres, each x shifted by `(int)(8 (i/n − 0.5))` against degeneracies; a centre that
//!    falls on an existing vertex (or, as third vertex, on the line of the first two) is skipped.
//! 2. Prim's minimum spanning tree over the Delaunay neighbours; outlying bins (every adjacent
//!    MST edge ≥ q75 + 1.5 IQR of the MST lengths) are peeled and the triangulation and tree
//!    rebuilt until none is found.
//! 3. The alpha complex with α = min(q90 of the original MST lengths, 100), the hull, and the
//!    nine measures from them.
//!
//! The reference crashes or never returns on some degenerate inputs (no triangle, a tree that
//! cannot span, nothing left after peeling); here each of those is an `Err` with the reason, and
//! every loop has a bound, so no input hangs or panics.

/// Why the scagnostics are undefined for an input.
pub(in crate::measures) type Fail = &'static str;
type R<T> = Result<T, Fail>;

const BROKEN: Fail = "the bins' triangulation is inconsistent (degenerate configuration)";

struct Node {
    x: i32,
    y: i32,
    count: i64,
    point_id: usize,
    mst_degree: u32,
    visited: bool,
    on_mst: bool,
    /// Delaunay neighbours: one edge per undirected pair, in the order `set_neighbors` met them.
    neighbors: Vec<usize>,
}

struct Edge {
    a: f64,
    b: f64,
    c: f64,
    weight: f64,
    on_mst: bool,
    on_shape: bool,
    p1: usize,
    p2: usize,
    in_t: Option<usize>,
    next_h: Option<usize>,
    inv_e: Option<usize>,
    next_e: Option<usize>,
}

struct Tri {
    cx: f64,
    cy: f64,
    r: f64,
    on_complex: bool,
    an_edge: usize,
}

/// The nine scagnostics, in the reference's result order.
pub(in crate::measures) const NAMES: [&str; 9] =
    ["outlying", "skewed", "clumpy", "sparse", "striated", "convex", "skinny", "stringy", "monotonic"];

struct Dt<'a> {
    px: &'a [i32],
    py: &'a [i32],
    counts: &'a [i64],
    nodes: Vec<Node>,
    node_list: Vec<usize>,
    edges: Vec<Edge>,
    edge_list: Vec<usize>,
    tris: Vec<Tri>,
    tri_list: Vec<usize>,
    mst_edges: Vec<usize>,
    hull_start: Option<usize>,
    act_e: Option<usize>,
    is_outlier: Vec<bool>,
    total_peeled_count: i64,
    total_original_mst_lengths: f64,
    total_mst_outlier_lengths: f64,
    sorted_original: Vec<f64>,
    /// Steps left for the searches, flips and hull walks (a bound the reference lacks).
    budget: u64,
}

/// The nine scagnostics ([`NAMES`] order) of bins at integer centres `px`, `py` with `counts`.
pub(in crate::measures) fn scagnostics(px: &[i32], py: &[i32], counts: &[i64], remove_outliers: bool) -> R<[f64; 9]> {
    let np = px.len();
    if np < 2 {
        return Err("all points fall into one bin");
    }
    let mut dt = Dt {
        px,
        py,
        counts,
        nodes: Vec::new(),
        node_list: Vec::new(),
        edges: Vec::new(),
        edge_list: Vec::new(),
        tris: Vec::new(),
        tri_list: Vec::new(),
        mst_edges: Vec::new(),
        hull_start: None,
        act_e: None,
        is_outlier: vec![false; np],
        total_peeled_count: 0,
        total_original_mst_lengths: 0.0,
        total_mst_outlier_lengths: 0.0,
        sorted_original: Vec::new(),
        budget: 1_000_000 + 1000 * (np as u64).pow(2),
    };
    dt.find_outliers(remove_outliers)?;
    dt.compute_alpha_graph()?;
    dt.measures()
}

impl Dt<'_> {
    fn tick(&mut self) -> R<()> {
        self.budget = self.budget.checked_sub(1).ok_or(BROKEN)?;
        Ok(())
    }
    fn next(&self, e: usize) -> R<usize> {
        self.edges[e].next_e.ok_or(BROKEN)
    }
    fn tri_of(&self, e: usize) -> R<usize> {
        self.edges[e].in_t.ok_or(BROKEN)
    }
    fn same_point(&self, a: usize, b: usize) -> bool {
        self.nodes[a].x == self.nodes[b].x && self.nodes[a].y == self.nodes[b].y
    }
    /// `Edge::otherNode`: compares coordinates, as the reference does.
    fn other(&self, e: usize, n: usize) -> usize {
        if self.same_point(n, self.edges[e].p1) { self.edges[e].p2 } else { self.edges[e].p1 }
    }
    fn dist(&self, n: usize, px: f64, py: f64) -> f64 {
        let dx = px - f64::from(self.nodes[n].x);
        let dy = py - f64::from(self.nodes[n].y);
        (dx * dx + dy * dy).sqrt()
    }

    fn new_edge(&mut self, p1: usize, p2: usize) -> usize {
        self.edges.push(Edge {
            a: 0.0,
            b: 0.0,
            c: 0.0,
            weight: 0.0,
            on_mst: false,
            on_shape: false,
            p1,
            p2,
            in_t: None,
            next_h: None,
            inv_e: None,
            next_e: None,
        });
        let e = self.edges.len() - 1;
        self.update(e, p1, p2);
        e
    }
    fn update(&mut self, e: usize, p1: usize, p2: usize) {
        let (n1, n2) = (&self.nodes[p1], &self.nodes[p2]);
        let a = f64::from(n2.y - n1.y);
        let b = f64::from(n1.x - n2.x);
        let c = f64::from(n2.x * n1.y - n1.x * n2.y);
        let ed = &mut self.edges[e];
        (ed.p1, ed.p2, ed.a, ed.b, ed.c) = (p1, p2, a, b, c);
        ed.weight = (a * a + b * b).sqrt();
    }
    fn on_side(&self, e: usize, nd: usize) -> i32 {
        let ed = &self.edges[e];
        let s = ed.a * f64::from(self.nodes[nd].x) + ed.b * f64::from(self.nodes[nd].y) + ed.c;
        if s > 0.0 {
            1
        } else if s < 0.0 {
            -1
        } else {
            0
        }
    }
    fn link_symm(&mut self, e: usize, f: usize) {
        self.edges[e].inv_e = Some(f);
        self.edges[f].inv_e = Some(e);
    }
    fn make_symm(&mut self, e: usize) -> usize {
        let (p1, p2) = (self.edges[e].p1, self.edges[e].p2);
        let f = self.new_edge(p2, p1);
        self.link_symm(e, f);
        f
    }
    fn most_left(&mut self, e0: usize) -> R<usize> {
        let mut e = e0;
        loop {
            self.tick()?;
            let nn = self.next(self.next(e)?)?;
            match self.edges[nn].inv_e {
                Some(ee) if ee != e0 => e = ee,
                _ => return Ok(nn),
            }
        }
    }

    /// `new Triangle(...)`, pushed on the triangle list; `listed`: the constructor that also
    /// pushes its three edges on the edge list.
    fn new_tri(&mut self, e1: usize, e2: usize, e3: usize, listed: bool) -> R<usize> {
        self.tris.push(Tri { cx: 0.0, cy: 0.0, r: 0.0, on_complex: true, an_edge: e1 });
        let t = self.tris.len() - 1;
        self.tri_update(t, e1, e2, e3)?;
        if listed {
            self.edge_list.extend([e1, e2, e3]);
        }
        self.tri_list.push(t);
        Ok(t)
    }
    fn tri_update(&mut self, t: usize, e1: usize, e2: usize, e3: usize) -> R<()> {
        self.tris[t].on_complex = true;
        self.tris[t].an_edge = e1;
        self.edges[e1].next_e = Some(e2);
        self.edges[e2].next_e = Some(e3);
        self.edges[e3].next_e = Some(e1);
        for e in [e1, e2, e3] {
            self.edges[e].in_t = Some(t);
        }
        self.find_circle(t)
    }
    fn find_circle(&mut self, t: usize) -> R<()> {
        let an = self.tris[t].an_edge;
        let (p1, p2) = (self.edges[an].p1, self.edges[an].p2);
        let p3 = self.edges[self.next(an)?].p2;
        let (x1, y1) = (f64::from(self.nodes[p1].x), f64::from(self.nodes[p1].y));
        let (x2, y2) = (f64::from(self.nodes[p2].x), f64::from(self.nodes[p2].y));
        let (x3, y3) = (f64::from(self.nodes[p3].x), f64::from(self.nodes[p3].y));
        let a = (y2 - y3) * (x2 - x1) - (y2 - y1) * (x2 - x3);
        let a1 = (x1 + x2) * (x2 - x1) + (y2 - y1) * (y1 + y2);
        let a2 = (x2 + x3) * (x2 - x3) + (y2 - y3) * (y2 + y3);
        let cx = (a1 * (y2 - y3) - a2 * (y2 - y1)) / a / 2.0;
        let cy = (a2 * (x2 - x1) - a1 * (x2 - x3)) / a / 2.0;
        let r = self.dist(p1, cx, cy);
        (self.tris[t].cx, self.tris[t].cy, self.tris[t].r) = (cx, cy, r);
        Ok(())
    }
    fn in_circle(&self, t: usize, nd: usize) -> bool {
        self.dist(nd, self.tris[t].cx, self.tris[t].cy) < self.tris[t].r
    }
    /// `Triangle::removeEdges`: its three edges leave the edge list.
    fn remove_edges(&mut self, t: usize) -> R<()> {
        let e1 = self.tris[t].an_edge;
        let e2 = self.next(e1)?;
        let e3 = self.next(e2)?;
        self.edge_list.retain(|&e| e != e1 && e != e2 && e != e3);
        Ok(())
    }

    fn insert(&mut self, x: i32, y: i32, count: i64, id: usize) -> R<()> {
        self.nodes.push(Node {
            x,
            y,
            count,
            point_id: id,
            mst_degree: 0,
            visited: false,
            on_mst: false,
            neighbors: Vec::new(),
        });
        let nd = self.nodes.len() - 1;
        self.node_list.push(nd);
        if self.node_list.len() < 3 {
            return Ok(());
        }
        if self.node_list.len() == 3 {
            let (mut p1, mut p2, p3) = (self.node_list[0], self.node_list[1], self.node_list[2]);
            let e1 = self.new_edge(p1, p2);
            match self.on_side(e1, p3) {
                0 => {
                    self.node_list.retain(|&n| n != nd);
                    return Ok(());
                }
                -1 => {
                    (p2, p1) = (self.node_list[0], self.node_list[1]);
                    self.update(e1, p1, p2);
                }
                _ => {}
            }
            let e2 = self.new_edge(p2, p3);
            let e3 = self.new_edge(p3, p1);
            self.edges[e1].next_h = Some(e2);
            self.edges[e2].next_h = Some(e3);
            self.edges[e3].next_h = Some(e1);
            self.hull_start = Some(e1);
            self.new_tri(e1, e2, e3, true)?;
            return Ok(());
        }
        let act = *self.edge_list.first().ok_or(BROKEN)?;
        self.act_e = Some(act);
        let eid = if self.on_side(act, nd) == -1 {
            match self.edges[act].inv_e {
                None => -1,
                Some(inv) => self.search_edge(inv, nd)?,
            }
        } else {
            self.search_edge(act, nd)?
        };
        if eid == 0 {
            self.node_list.retain(|&n| n != nd);
            return Ok(());
        }
        if eid > 0 {
            let act = self.act_e.ok_or(BROKEN)?;
            self.expand_tri(act, nd, eid)
        } else {
            self.expand_hull(nd)
        }
    }

    fn search_edge(&mut self, e0: usize, nd: usize) -> R<i32> {
        let mut e = e0;
        loop {
            self.tick()?;
            let ne = self.next(e)?;
            let f2 = self.on_side(ne, nd);
            if f2 == -1 {
                match self.edges[ne].inv_e {
                    Some(inv) => {
                        e = inv;
                        continue;
                    }
                    None => {
                        self.act_e = Some(e);
                        return Ok(-1);
                    }
                }
            }
            let mut on = if f2 == 0 { Some(ne) } else { None };
            let ee = ne;
            let nee = self.next(ee)?;
            let f3 = self.on_side(nee, nd);
            if f3 == -1 {
                match self.edges[nee].inv_e {
                    Some(inv) => {
                        e = inv;
                        continue;
                    }
                    None => {
                        self.act_e = Some(nee);
                        return Ok(-1);
                    }
                }
            }
            if f3 == 0 {
                on = Some(nee);
            }
            if self.on_side(e, nd) == 0 {
                on = Some(e);
            }
            if let Some(e0) = on {
                self.act_e = Some(e0);
                let n1 = self.next(e0)?;
                if self.on_side(n1, nd) == 0 {
                    self.act_e = Some(n1);
                    return Ok(0);
                }
                if self.on_side(self.next(n1)?, nd) == 0 {
                    return Ok(0);
                }
                return Ok(1);
            }
            self.act_e = Some(ee);
            return Ok(2);
        }
    }

    fn swap_test(&mut self, e11: usize) -> R<()> {
        self.tick()?;
        let Some(e21) = self.edges[e11].inv_e else { return Ok(()) };
        let Some(t2) = self.edges[e21].in_t else { return Ok(()) };
        let t1 = self.tri_of(e11)?;
        let e12 = self.next(e11)?;
        let e13 = self.next(e12)?;
        let e22 = self.next(e21)?;
        let e23 = self.next(e22)?;
        let (q22, q12) = (self.edges[e22].p2, self.edges[e12].p2);
        if self.in_circle(t1, q22) || self.in_circle(t2, q12) {
            self.update(e11, q22, q12);
            self.update(e21, q12, q22);
            self.link_symm(e11, e21);
            let t13 = self.tri_of(e13)?;
            self.tri_update(t13, e13, e22, e11)?;
            let t23 = self.tri_of(e23)?;
            self.tri_update(t23, e23, e12, e21)?;
            self.swap_test(e12)?;
            self.swap_test(e22)?;
            self.swap_test(e13)?;
            self.swap_test(e23)?;
        }
        Ok(())
    }

    fn expand_tri(&mut self, e: usize, nd: usize, kind: i32) -> R<()> {
        let e1 = e;
        let e2 = self.next(e1)?;
        let e3 = self.next(e2)?;
        let (p1, p2, p3) = (self.edges[e1].p1, self.edges[e2].p1, self.edges[e3].p1);
        let t = self.tri_of(e)?;
        if kind == 2 {
            // nd inside the triangle.
            let e10 = self.new_edge(p1, nd);
            let e20 = self.new_edge(p2, nd);
            let e30 = self.new_edge(p3, nd);
            self.tri_list.retain(|&x| x != t);
            self.remove_edges(t)?;
            let e100 = self.make_symm(e10);
            let e200 = self.make_symm(e20);
            let e300 = self.make_symm(e30);
            self.new_tri(e1, e20, e100, true)?;
            self.new_tri(e2, e30, e200, true)?;
            self.new_tri(e3, e10, e300, true)?;
            self.swap_test(e1)?;
            self.swap_test(e2)?;
            self.swap_test(e3)?;
            return Ok(());
        }
        // nd on the edge e.
        let e4 = self.edges[e1].inv_e.filter(|&e4| self.edges[e4].in_t.is_some());
        match e4 {
            None => {
                // One triangle: e is a hull edge.
                let e30 = self.new_edge(p3, nd);
                let e02 = self.new_edge(nd, p2);
                let e10 = self.new_edge(p1, nd);
                let e03 = self.make_symm(e30);
                let ml = self.most_left(e1)?;
                self.edges[ml].next_h = Some(e10);
                self.edges[e10].next_h = Some(e02);
                self.edges[e02].next_h = self.edges[e1].next_h;
                self.hull_start = Some(e02);
                self.tri_list.retain(|&x| x != t);
                self.remove_edges(t)?;
                self.edge_list.retain(|&x| x != e1);
                self.edge_list.extend([e10, e02, e30, e03]);
                // The reference's unlisted constructor: e2 and e3 stay off the edge list.
                self.new_tri(e2, e30, e02, false)?;
                self.new_tri(e3, e10, e03, false)?;
                self.swap_test(e2)?;
                self.swap_test(e3)?;
                self.swap_test(e30)?;
            }
            Some(e4) => {
                let e5 = self.next(e4)?;
                let e6 = self.next(e5)?;
                let p4 = self.edges[e6].p1;
                let e10 = self.new_edge(p1, nd);
                let e20 = self.new_edge(p2, nd);
                let e30 = self.new_edge(p3, nd);
                let e40 = self.new_edge(p4, nd);
                self.tri_list.retain(|&x| x != t);
                self.remove_edges(t)?;
                let t4 = self.tri_of(e4)?;
                self.tri_list.retain(|&x| x != t4);
                self.remove_edges(t4)?;
                let s20 = self.make_symm(e20);
                self.new_tri(e2, e30, s20, true)?;
                let s30 = self.make_symm(e30);
                self.new_tri(e3, e10, s30, true)?;
                let s10 = self.make_symm(e10);
                self.new_tri(e5, e40, s10, true)?;
                let s40 = self.make_symm(e40);
                self.new_tri(e6, e20, s40, true)?;
                for s in [e2, e3, e5, e6, e10, e20, e30, e40] {
                    self.swap_test(s)?;
                }
            }
        }
        Ok(())
    }

    fn expand_hull(&mut self, nd: usize) -> R<()> {
        let mut e3: Option<usize> = None;
        let mut e = self.hull_start.ok_or(BROKEN)?;
        let (mut comedge, mut lastbe): (Option<usize>, Option<usize>) = (None, None);
        loop {
            self.tick()?;
            let enext = self.edges[e].next_h.ok_or(BROKEN)?;
            if self.on_side(e, nd) == -1 {
                if let Some(lb) = lastbe {
                    let e1 = self.make_symm(e);
                    let e2 = self.new_edge(self.edges[e].p1, nd);
                    let n3 = self.new_edge(nd, self.edges[e].p2);
                    e3 = Some(n3);
                    match comedge {
                        None => {
                            self.hull_start = Some(lb);
                            self.edges[lb].next_h = Some(e2);
                            lastbe = Some(e2);
                        }
                        Some(c) => self.link_symm(c, e2),
                    }
                    comedge = Some(n3);
                    self.new_tri(e1, e2, n3, true)?;
                    self.swap_test(e)?;
                }
            } else {
                if comedge.is_some() {
                    break;
                }
                lastbe = Some(e);
            }
            e = enext;
        }
        let (lb, n3) = (lastbe.ok_or(BROKEN)?, e3.ok_or(BROKEN)?);
        self.edges[lb].next_h = Some(n3);
        self.edges[n3].next_h = Some(e);
        Ok(())
    }

    fn compute_dt(&mut self) -> R<()> {
        self.total_peeled_count = 0;
        let np = self.px.len();
        for i in 0..np {
            // The reference's systematic offset against singularities.
            let x = self.px[i] + (8.0 * (i as f64 / np as f64 - 0.5)) as i32;
            if !self.is_outlier[i] {
                self.insert(x, self.py[i], self.counts[i], i)?;
                self.total_peeled_count += self.counts[i];
            }
        }
        self.set_neighbors();
        Ok(())
    }
    fn clear(&mut self) {
        self.nodes.clear();
        self.node_list.clear();
        self.edges.clear();
        self.edge_list.clear();
        self.tris.clear();
        self.tri_list.clear();
        self.mst_edges.clear();
        self.hull_start = None;
        self.act_e = None;
    }
    fn equivalent(&self, e: usize, f: usize) -> bool {
        let (a, b) = (&self.edges[e], &self.edges[f]);
        (self.same_point(a.p1, b.p1) && self.same_point(a.p2, b.p2))
            || (self.same_point(a.p1, b.p2) && self.same_point(a.p2, b.p1))
    }
    fn set_neighbors(&mut self) {
        for k in 0..self.edge_list.len() {
            let e = self.edge_list[k];
            for p in [self.edges[e].p2, self.edges[e].p1] {
                if !self.nodes[p].neighbors.iter().any(|&f| self.equivalent(e, f)) {
                    self.nodes[p].neighbors.push(e);
                }
            }
        }
    }

    fn shortest_edge(&self, n: usize) -> Option<usize> {
        let mut emin = None;
        let mut wmin = f64::MAX;
        for &e in &self.nodes[n].neighbors {
            if !self.nodes[self.other(e, n)].on_mst {
                let wt = self.edges[e].weight;
                if wt < wmin {
                    wmin = wt;
                    emin = Some(e);
                }
            }
        }
        emin
    }
    /// Prim's algorithm from the first node, as the reference.
    fn compute_mst(&mut self) -> R<()> {
        if self.node_list.len() <= 1 {
            return Ok(());
        }
        let first = self.node_list[0];
        let mut mst_nodes = vec![first];
        self.nodes[first].on_mst = true;
        while mst_nodes.len() < self.node_list.len() {
            let (mut add, mut wmin, mut nmin) = (None, f64::MAX, first);
            for &m in &mst_nodes {
                if let Some(c) = self.shortest_edge(m) {
                    let wt = self.edges[c].weight;
                    if wt < wmin {
                        (wmin, nmin, add) = (wt, m, Some(c));
                    }
                }
            }
            // The reference loops forever here.
            let e = add.ok_or("the bins' triangulation does not connect them (collinear or coincident bins)")?;
            let node = self.other(e, nmin);
            mst_nodes.push(node);
            self.nodes[node].on_mst = true;
            self.mst_edges.push(e);
            self.edges[e].on_mst = true;
            let (p1, p2) = (self.edges[e].p1, self.edges[e].p2);
            self.nodes[p1].mst_degree += 1;
            self.nodes[p2].mst_degree += 1;
        }
        Ok(())
    }
    fn sorted_mst_lengths(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.mst_edges.iter().map(|&e| self.edges[e].weight).collect();
        v.sort_by(f64::total_cmp);
        v
    }
    fn mst_outliers(&mut self, omega: f64) -> bool {
        let mut found = false;
        for k in 0..self.node_list.len() {
            let n = self.node_list[k];
            let (mut delete, mut sum) = (true, 0.0);
            for &e in &self.nodes[n].neighbors {
                if self.edges[e].on_mst {
                    let length = self.edges[e].weight;
                    sum += length;
                    if length < omega {
                        delete = false;
                    }
                }
            }
            if delete {
                self.total_mst_outlier_lengths += sum;
                self.is_outlier[self.nodes[n].point_id] = true;
                found = true;
            }
        }
        found
    }
    fn find_outliers(&mut self, remove_outliers: bool) -> R<()> {
        self.compute_dt()?;
        if self.tri_list.is_empty() {
            return Err("the bins are collinear or coincident: no triangle to build the graphs on");
        }
        self.compute_mst()?;
        self.sorted_original = self.sorted_mst_lengths();
        let cutoff = cutoff_of(&self.sorted_original);
        self.total_original_mst_lengths = self.sorted_original.iter().fold(0.0, |s, &l| s + l);
        let mut found = self.mst_outliers(cutoff);
        if remove_outliers {
            while found {
                self.clear();
                self.compute_dt()?;
                self.compute_mst()?;
                let peeled = self.sorted_mst_lengths();
                found = self.mst_outliers(cutoff_of(&peeled));
            }
        }
        Ok(())
    }

    fn compute_alpha_graph(&mut self) -> R<()> {
        let n90 = (9 * self.mst_edges.len()) / 10;
        let alpha = self.sorted_original.get(n90).copied().ok_or(BROKEN)?.min(100.0);
        loop {
            self.tick()?;
            let mut deleted = false;
            for k in 0..self.edge_list.len() {
                let e = self.edge_list[k];
                let t = self.tri_of(e)?;
                if !self.tris[t].on_complex {
                    continue;
                }
                if alpha < self.edges[e].weight / 2.0 {
                    self.tris[t].on_complex = false;
                    deleted = true;
                } else {
                    if let Some(inv) = self.edges[e].inv_e
                        && self.tris[self.tri_of(inv)?].on_complex
                    {
                        continue;
                    }
                    if !self.edge_is_exposed(alpha, e) {
                        self.tris[t].on_complex = false;
                        deleted = true;
                    }
                }
            }
            if !deleted {
                break;
            }
        }
        // markShape.
        for k in 0..self.edge_list.len() {
            let e = self.edge_list[k];
            let on = self.tris[self.tri_of(e)?].on_complex
                && match self.edges[e].inv_e {
                    None => true,
                    Some(inv) => !self.tris[self.tri_of(inv)?].on_complex,
                };
            self.edges[e].on_shape = on;
        }
        Ok(())
    }
    fn edge_is_exposed(&self, alpha: f64, e: usize) -> bool {
        let ed = &self.edges[e];
        let (x1, y1) = (f64::from(self.nodes[ed.p1].x), f64::from(self.nodes[ed.p1].y));
        let (x2, y2) = (f64::from(self.nodes[ed.p2].x), f64::from(self.nodes[ed.p2].y));
        let (xe, ye) = ((x1 + x2) / 2.0, (y1 + y2) / 2.0);
        let w = ed.weight;
        let d = (alpha * alpha - w * w / 4.0).sqrt();
        let xt = d * (y2 - y1) / w;
        let yt = d * (x2 - x1) / w;
        let (xc1, yc1, xc2, yc2) = (xe + xt, ye - yt, xe - xt, ye + yt);
        let in1 = self.points_in_circle(ed.p1, xc1, yc1, alpha) || self.points_in_circle(ed.p2, xc1, yc1, alpha);
        let in2 = self.points_in_circle(ed.p1, xc2, yc2, alpha) || self.points_in_circle(ed.p2, xc2, yc2, alpha);
        !(in1 && in2)
    }
    fn points_in_circle(&self, n: usize, xc: f64, yc: f64, radius: f64) -> bool {
        let r = 0.999 * radius;
        self.nodes[n].neighbors.iter().any(|&e| self.dist(self.other(e, n), xc, yc) < r)
    }

    fn tri_area2(&self, t: usize) -> R<i64> {
        let an = self.tris[t].an_edge;
        let (a, b) = (&self.nodes[self.edges[an].p1], &self.nodes[self.edges[an].p2]);
        let c = &self.nodes[self.edges[self.next(an)?].p2];
        let (a, b, c) =
            ((i64::from(a.x), i64::from(a.y)), (i64::from(b.x), i64::from(b.y)), (i64::from(c.x), i64::from(c.y)));
        Ok((a.0 * b.1 + a.1 * c.0 + b.0 * c.1 - c.0 * b.1 - c.1 * a.0 - a.1 * b.0).abs())
    }

    fn measures(&mut self) -> R<[f64; 9]> {
        let total_count: i64 = self.counts.iter().sum();
        let (mut alpha_area, mut hull_area) = (0.0, 0.0);
        for k in 0..self.tri_list.len() {
            let t = self.tri_list[k];
            let a = self.tri_area2(t)? as f64;
            if self.tris[t].on_complex {
                alpha_area += a;
            }
            hull_area += a;
        }
        let (alpha_area, hull_area) = (alpha_area / 2.0, hull_area / 2.0);
        let alpha_perimeter =
            self.edge_list.iter().filter(|&&e| self.edges[e].on_shape).fold(0.0, |s, &e| s + self.edges[e].weight);
        let t = total_count as f64 / 500.0;
        let correction = 0.7 + 0.3 / (1.0 + t * t);
        // Computed first, as the reference (it cuts and restores each tree edge in turn).
        let clumpy = self.clumpy()?;
        let so = &self.sorted_original;
        let n = self.mst_edges.len();
        let at = |i: usize| so.get(i).copied().ok_or(BROKEN);

        let outlying = self.total_mst_outlier_lengths / self.total_original_mst_lengths;
        let skewed = if n == 0 {
            0.0
        } else {
            let s = (at(9 * n / 10)? - at(n / 2)?) / (at(9 * n / 10)? - at(n / 10)?);
            1.0 - correction * (1.0 - s)
        };
        let convex = if hull_area == 0.0 { 1.0 } else { correction * (alpha_area / hull_area) };
        let skinny = if alpha_perimeter > 0.0 {
            1.0 - (4.0 * std::f64::consts::PI * alpha_area).sqrt() / alpha_perimeter
        } else {
            1.0
        };
        let stringy = {
            let deg = |d: u32| self.node_list.iter().filter(|&&v| self.nodes[v].mst_degree == d).count();
            let r = deg(2) as f64 / (self.node_list.len() as f64 - deg(1) as f64);
            r * r * r
        };
        let striated = self.striated()?;
        let sparse = correction * (at(9 * n / 10)? / 1000.0).min(1.0);
        let monotonic = self.monotonic();
        Ok([outlying, skewed, clumpy, sparse, striated, convex, skinny, stringy, monotonic])
    }

    fn mst_children(&mut self, n: usize, cutoff: f64, max_length: &mut f64) -> i64 {
        if self.nodes[n].visited {
            return 0;
        }
        self.nodes[n].visited = true;
        let mut count = 0;
        for k in 0..self.nodes[n].neighbors.len() {
            let e = self.nodes[n].neighbors[k];
            if self.edges[e].on_mst && self.edges[e].weight < cutoff {
                let o = self.other(e, n);
                if !self.nodes[o].visited {
                    count += self.mst_children(o, cutoff, max_length);
                    let el = self.edges[e].weight;
                    if el > *max_length {
                        *max_length = el;
                    }
                }
            }
        }
        count + self.nodes[n].count
    }
    fn clumpy(&mut self) -> R<f64> {
        let mut max_value = 0.0;
        for k in 0..self.mst_edges.len() {
            let e = self.mst_edges[k];
            for &v in &self.node_list {
                self.nodes[v].visited = false;
            }
            self.edges[e].on_mst = false;
            let cutoff = self.edges[e].weight;
            let (mut m1, mut m2) = (0.0, 0.0);
            let c1 = self.mst_children(self.edges[e].p1, cutoff, &mut m1);
            let c2 = self.mst_children(self.edges[e].p2, cutoff, &mut m2);
            let (runts, max_length) = match c1.cmp(&c2) {
                std::cmp::Ordering::Less => (c1, m1),
                std::cmp::Ordering::Equal => (c1, if m1 < m2 { m1 } else { m2 }),
                std::cmp::Ordering::Greater => (c2, m2),
            };
            self.edges[e].on_mst = true;
            if max_length > 0.0 {
                let value = runts as f64 * (1.0 - max_length / self.edges[e].weight);
                if value > max_value {
                    max_value = value;
                }
            }
        }
        Ok(2.0 * max_value / self.total_peeled_count as f64)
    }
    fn adjacent_mst_edge(&self, n: usize, e: usize) -> R<usize> {
        self.nodes[n].neighbors.iter().copied().find(|&f| self.edges[f].on_mst && f != e).ok_or(BROKEN)
    }
    fn cosine(&self, e1: usize, e2: usize, n: usize) -> f64 {
        let (o1, o2, nn) = (&self.nodes[self.other(e1, n)], &self.nodes[self.other(e2, n)], &self.nodes[n]);
        let (mut v1x, mut v1y) = (f64::from(o1.x - nn.x), f64::from(o1.y - nn.y));
        let (mut v2x, mut v2y) = (f64::from(o2.x - nn.x), f64::from(o2.y - nn.y));
        let v1 = (v1x * v1x + v1y * v1y).sqrt();
        let v2 = (v2x * v2x + v2y * v2y).sqrt();
        v1x /= v1;
        v1y /= v1;
        v2x /= v2;
        v2y /= v2;
        v1x * v2x + v1y * v2y
    }
    fn striated(&self) -> R<f64> {
        let mut num = 0.0;
        for &e in &self.mst_edges {
            let (n1, n2) = (self.edges[e].p1, self.edges[e].p2);
            if self.nodes[n1].mst_degree == 2 && self.nodes[n2].mst_degree == 2 {
                let e1 = self.adjacent_mst_edge(n1, e)?;
                let e2 = self.adjacent_mst_edge(n2, e)?;
                if self.cosine(e, e1, n1) < -0.7 && self.cosine(e, e2, n2) < -0.7 {
                    num += 1.0;
                }
            }
        }
        Ok(num / self.mst_edges.len() as f64)
    }
    /// The reference's weighted Pearson correlation of the (unshifted) bin centres, outliers
    /// left out, squared (its running update, kept as written).
    fn monotonic(&self) -> f64 {
        let (mut xmean, mut ymean, mut xx, mut yy, mut xy, mut sumwt) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for i in 0..self.px.len() {
            let wt = self.counts[i] as f64;
            if wt > 0.0 && !self.is_outlier[i] {
                let (x, y) = (f64::from(self.px[i]), f64::from(self.py[i]));
                sumwt += wt;
                xx += (x - xmean) * wt * (x - xmean);
                yy += (y - ymean) * wt * (y - ymean);
                xy += (x - xmean) * wt * (y - ymean);
                xmean += (x - xmean) * wt / sumwt;
                ymean += (y - ymean) * wt / sumwt;
            }
        }
        let s = xy / (xx * yy).sqrt();
        s * s
    }
}

/// `computeCutoff`: q75 + 1.5 IQR of sorted lengths, by the reference's indices (0 when empty).
fn cutoff_of(lengths: &[f64]) -> f64 {
    let n = lengths.len();
    if n == 0 {
        return 0.0;
    }
    let n50 = n / 2;
    let n25 = n50 / 2;
    let n75 = n50 + n25;
    lengths[n75] + 1.5 * (lengths[n75] - lengths[n25])
}

fn f(mut x: Vec<Vec<i64>>) -> Vec<Vec<i64>> {
    x.sort();
    let mut out: Vec<Vec<i64>> = vec![];
    for p in x {
        match out.last_mut() {
            Some(q) if p[0] <= q[1] => q[1] = q[1].max(p[1]),
            _ => out.push(p),
        }
    }
    out
}

fn f(a: String, b: String) -> i64 {
    let b: Vec<char> = b.chars().collect();
    let mut p: Vec<i64> = (0..=b.len() as i64).collect();
    for (i, c) in a.chars().enumerate() {
        let mut q = vec![i as i64 + 1];
        for j in 1..=b.len() {
            let v = (p[j] + 1).min(q[j - 1] + 1).min(p[j - 1] + (c != b[j - 1]) as i64);
            q.push(v);
        }
        p = q;
    }
    p[b.len()]
}

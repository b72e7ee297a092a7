fn g(x: &[N], d: i64) -> i64 {
    x.iter().map(|e| match e { I(v) => v * d, L(l) => g(l, d + 1) }).sum()
}
fn f(x: Vec<N>) -> i64 {
    g(&x, 1)
}

fn f(s: String) -> i64 {
    let v: Vec<i64> = s.chars().map(|c| match c {
        'I' => 1, 'V' => 5, 'X' => 10, 'L' => 50, 'C' => 100, 'D' => 500, _ => 1000,
    }).collect();
    (0..v.len()).map(|i| if i + 1 < v.len() && v[i] < v[i + 1] { -v[i] } else { v[i] }).sum()
}

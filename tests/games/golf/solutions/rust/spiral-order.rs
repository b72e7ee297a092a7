fn f(m: Vec<Vec<i64>>) -> Vec<i64> {
    let mut out = vec![];
    if m.is_empty() {
        return out;
    }
    let (mut top, mut bottom, mut left, mut right) = (0i64, m.len() as i64 - 1, 0i64, m[0].len() as i64 - 1);
    while top <= bottom && left <= right {
        for c in left..=right { out.push(m[top as usize][c as usize]); }
        for r in top + 1..=bottom { out.push(m[r as usize][right as usize]); }
        if top < bottom {
            for c in (left..right).rev() { out.push(m[bottom as usize][c as usize]); }
        }
        if left < right {
            for r in (top + 1..bottom).rev() { out.push(m[r as usize][left as usize]); }
        }
        top += 1; bottom -= 1; left += 1; right -= 1;
    }
    out
}

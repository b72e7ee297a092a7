fn f(t: Vec<String>) -> i64 {
    let mut s: Vec<i64> = vec![];
    for x in t {
        match x.as_str() {
            "+" | "-" | "*" | "/" => {
                let b = s.pop().unwrap();
                let a = s.pop().unwrap();
                s.push(match x.as_str() { "+" => a + b, "-" => a - b, "*" => a * b, _ => a / b });
            }
            n => s.push(n.parse().unwrap()),
        }
    }
    s[0]
}

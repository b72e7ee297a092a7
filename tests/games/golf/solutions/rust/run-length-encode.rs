fn f(s: String) -> String {
    let mut out = String::new();
    let cs: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < cs.len() {
        let mut j = i;
        while j < cs.len() && cs[j] == cs[i] {
            j += 1;
        }
        out += &format!("{}{}", j - i, cs[i]);
        i = j;
    }
    out
}

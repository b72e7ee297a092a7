fn f(s: String) -> bool {
    let mut st = Vec::new();
    for c in s.chars() {
        match c {
            '(' | '[' | '{' => st.push(c),
            ')' | ']' | '}' => {
                let want = match c { ')' => '(', ']' => '[', _ => '{' };
                if st.pop() != Some(want) {
                    return false;
                }
            }
            _ => {}
        }
    }
    st.is_empty()
}

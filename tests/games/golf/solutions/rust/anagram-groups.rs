fn f(w: Vec<String>) -> Vec<Vec<String>> {
    let mut keys: Vec<Vec<char>> = vec![];
    let mut groups: Vec<Vec<String>> = vec![];
    for x in w {
        let mut k: Vec<char> = x.chars().collect();
        k.sort();
        match keys.iter().position(|y| *y == k) {
            Some(i) => groups[i].push(x),
            None => { keys.push(k); groups.push(vec![x]); }
        }
    }
    groups
}

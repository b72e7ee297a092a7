fn f(x:Vec<i64>)->Vec<i64>{let mut o=vec![];for v in x{if !o.contains(&v){o.push(v)}}o}

fn f(mut x:Vec<i64>)->Vec<i64>{x.sort_by_key(|v|(v.abs(),*v));x}

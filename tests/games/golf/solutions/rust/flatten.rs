fn f(x:Vec<N>)->Vec<i64>{x.into_iter().flat_map(|e|match e{I(v)=>vec![v],L(l)=>f(l)}).collect()}

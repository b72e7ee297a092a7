fn f(s:String)->bool{s.chars().eq(s.chars().rev())}

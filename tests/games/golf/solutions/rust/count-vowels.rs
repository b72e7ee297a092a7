fn f(s:String)->i64{s.chars().filter(|c|"aeiouAEIOU".contains(*c)).count()as i64}

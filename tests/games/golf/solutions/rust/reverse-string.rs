fn f(s:String)->String{s.chars().rev().collect()}

fn f(s:String,k:i64)->String{s.chars().map(|c|if c.is_ascii_lowercase(){((c as i64-97+k).rem_euclid(26)+97)as u8 as char}else{c}).collect()}

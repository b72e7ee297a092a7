fn f(n:i64)->i64{if n<10{n}else{n%10+f(n/10)}}

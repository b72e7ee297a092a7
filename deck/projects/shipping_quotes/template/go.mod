module shippingquotes

go 1.19

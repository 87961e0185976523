module example.com/linkshort

go 1.26

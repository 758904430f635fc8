module github.com/zerostat/zerostat

go 1.26

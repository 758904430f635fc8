package tag_test

import (
	"context"
	"fmt"

	"github.com/zerostat/zerostat/tag"
)

var (
	keyMethod = tag.MustNewKey("http.method")
	keyRoute  = tag.MustNewKey("http.route")
)

func ExampleNew() {
	ctx, err := tag.New(context.Background(),
		tag.Upsert(keyMethod, "GET"),
		tag.Insert(keyRoute, "/users"),
	)
	if err != nil {
		panic(err)
	}
	fmt.Println(tag.FromContext(ctx))
	// Output: { {http.method GET}{http.route /users} }
}

func ExampleEncode() {
	ctx, _ := tag.New(context.Background(), tag.Upsert(keyMethod, "GET"))
	b := tag.Encode(tag.FromContext(ctx))
	fmt.Printf("% x\n", b)
	m, err := tag.Decode(b)
	fmt.Println(m, err)
	// Output:
	// 00 00 0b 68 74 74 70 2e 6d 65 74 68 6f 64 03 47 45 54
	// { {http.method GET} } <nil>
}

package keyhivetest_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/keyhive/keyhive/keyhivetest"
)

// A test points its client at the server, lets the code under test run,
// checks the keys directly and moves the clock past a TTL. In a test,
// keyhivetest.Run(t) replaces Start and the deferred Close.
func Example() {
	srv, err := keyhivetest.Start()
	if err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	// The code under test keeps a session for 30 minutes.
	if err := rdb.Set(ctx, "session:42", "ada", 30*time.Minute).Err(); err != nil {
		panic(err)
	}

	name, _ := srv.Get("session:42")
	fmt.Println(name, srv.TTL("session:42"))

	srv.FastForward(30 * time.Minute)
	fmt.Println(srv.Exists("session:42"))
	_, err = rdb.Get(ctx, "session:42").Result()
	fmt.Println(errors.Is(err, redis.Nil))
	// Output:
	// ada 30m0s
	// false
	// true
}

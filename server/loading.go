package server

import "fmt"

// loadingClient is the client the commands of one loaded AOF file run as:
// authenticated, obeyed whatever its ACL user may do, in database 0 until
// a SELECT of the file switches it.
func (s *Server) loadingClient() *Client {
	c := &Client{s: s, authenticated: true, obeys: true}
	c.out.Errors = loaderErrors{&s.stats.errors}
	c.ctx = newCtx(s, c, &c.out)
	c.ctx.DB = s.ks.DB(0)
	return c
}

// applyLoaded runs one command loaded from the AOF as c through the one
// dispatch path, as a client that obeys: the caller holds the exclusive
// lock or runs alone (start-up). Its reply is dropped.
func (s *Server) applyLoaded(c *Client, args [][]byte) error {
	c.ctx.Now = s.clock.UnixMilli()
	ok := c.dispatch(args, fromLoader)
	c.out.B = c.out.B[:0]
	if !ok {
		if _, res := c.resolve(args); res != wrongArity {
			return fmt.Errorf("Unknown command '%s'", args[0])
		}
		return fmt.Errorf("Wrong number of arguments for '%s' command", args[0])
	}
	return nil
}

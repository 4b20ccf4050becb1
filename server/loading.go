package server

import "fmt"

// loadingClient is the client the commands of one loaded AOF file run as:
// authenticated, obeyed whatever its ACL user may do, in database 0 until
// a SELECT of the file switches it.
func (s *Server) loadingClient() *Client {
	c := &Client{s: s, authenticated: true, obeys: true}
	c.ctx = Ctx{s: s, c: c, W: &c.out, DB: s.ks.DB(0)}
	return c
}

// applyLoaded runs one command loaded from the AOF as c, directly, as a
// script's commands run: the caller holds the exclusive lock or runs alone
// (start-up). Its reply is dropped.
func (s *Server) applyLoaded(c *Client, args [][]byte) error {
	x := &c.ctx
	cmd := lookupCommand(table, args[0])
	if cmd != nil && cmd.Sub != nil && len(args) >= 2 {
		cmd = lookupCommand(cmd.Sub, args[1])
	}
	if cmd == nil || (cmd.Arity > 0 && len(args) != cmd.Arity) || len(args) < -cmd.Arity {
		return fmt.Errorf("unknown command '%s' or wrong number of arguments", args[0])
	}
	x.cmd, x.Args, x.Now = cmd, args, s.clock.UnixMilli()
	x.cannotBlock = true
	cmd.Run(x)
	x.DB = s.ks.DB(int(c.db.Load())) // after a SELECT
	c.out.B = c.out.B[:0]
	return nil
}

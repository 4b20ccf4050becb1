package server

// setDB switches the client's database.
func (c *Client) setDB(i int) { c.db.Store(int32(i)) }

// Client returns the handler's client, for connection-level commands.
func (x *Ctx) Client() *Client { return x.c }

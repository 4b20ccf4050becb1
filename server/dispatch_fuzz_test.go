package server

import (
	"bytes"
	"net"
	"testing"

	"github.com/keyhive/keyhive/resp"
)

// FuzzCommands runs arbitrary command lines through the real dispatch path:
// whatever a client sends, the server must answer without panicking. Commands
// that stop or stall the server (SHUTDOWN, DEBUG SLEEP) are left out.
func FuzzCommands(f *testing.F) {
	for _, seed := range []string{
		"SET k v EX 10\nGET k\nAPPEND k xyz\nGETRANGE k -100 100",
		"SETRANGE k 1048570 abcdefgh\nSTRLEN k\nSETBIT k 8388607 1\nBITCOUNT k 0 -1 BIT",
		"MSET a 1 b 2\nMGET a b c\nINCRBYFLOAT a 1e308\nINCRBY b 9223372036854775807",
		"SCAN 0 MATCH *[a-\nKEYS [^\\\nRANDOMKEY\nCOPY a z DB 15\nMOVE z 3\nSWAPDB 0 3",
		"EXPIRE a -1 GT\nPEXPIREAT b 1\nGETEX b PERSIST\nOBJECT FREQ b\nTTL b",
		"BITFIELD k SET i64 #9223372036854775807 -1 INCRBY u63 0 1 OVERFLOW FAIL GET i8 100",
		"LCS a b IDX MINMATCHLEN 1 WITHMATCHLEN\nBITOP NOT d a\nBITPOS d 0 -1 -2 BIT",
		"HELLO 3 SETNAME x\nCLIENT LIST ID 1 2\nCONFIG SET maxmemory 1kb\nCONFIG GET *max*\nINFO everything",
		"COMMAND GETKEYS SET a b\nCOMMAND INFO get config|get\nCLIENT REPLY SKIP\nFLUSHALL ASYNC",
		"HSET h a 1 b 2\nHINCRBYFLOAT h a 1e308\nHRANDFIELD h -5 WITHVALUES\nHSCAN h 0 MATCH * COUNT 1\nHDEL h a b\nRENAME h g",
		"CONFIG SET hash-max-listpack-entries 1\nHSET big x 1 y 2 z 3\nCOPY big c\nHGETALL c\nOBJECT ENCODING big\nHSTRLEN big y",
		"RPUSH l a b c\nLPOS l b RANK -1 COUNT 0\nLINSERT l BEFORE b x\nLMPOP 2 l m LEFT COUNT 2\nLTRIM l 1 -1\nLMOVE l l2 LEFT RIGHT",
		"SADD s 1 2 x\nSINTERCARD 2 s t LIMIT 1\nSPOP s 2\nSRANDMEMBER s -3\nSUNIONSTORE u s l\nSMOVE s u 1",
		"XADD x 1-1 a 1\nXADD x MAXLEN ~ 1 LIMIT 5 * b 2\nXRANGE x (1-1 + COUNT 1\nXDEL x 1-1\nXTRIM x MINID = 5\nXSETID x 9-9 ENTRIESADDED 9 MAXDELETEDID 1-1\nXINFO STREAM x FULL COUNT 0",
		"XGROUP CREATE x g $ MKSTREAM ENTRIESREAD 5\nXREADGROUP GROUP g c COUNT 1 NOACK STREAMS x >\nXCLAIM x g d 0 0-1 FORCE LASTID 9-9\nXAUTOCLAIM x g d 0 - COUNT 1 JUSTID\nXPENDING x g IDLE 1 - + 5 c\nXINFO GROUPS x",
		"PFADD h a b c\nAPPEND h \x7f\nPFCOUNT h\nPFMERGE m h x\nPFDEBUG GETREG h\nSETRANGE m 20 \xff\xff\nPFADD m z\nPFDEBUG DECODE m",
		"GEOADD g 13.36 38.11 a 15.08 37.50 b\nZADD g -1 c inf d\nGEOPOS g a c d\nGEOSEARCH g FROMMEMBER c BYBOX 1e9 0 km WITHCOORD\nGEORADIUS g 180 0 inf mi STORE s COUNT 1",
		"CONFIG SET slowlog-log-slower-than 0\nCONFIG SET slowlog-max-len 2\nAUTH a b\nHELLO 2 AUTH u\nEVAL \"return redis.call('PING')\" 0\nSLOWLOG GET 9223372036854775807\nSLOWLOG GET -1\nSLOWLOG LEN\nSLOWLOG RESET",
	} {
		f.Add([]byte(seed))
	}
	s := newTestServer(f, "--proto-max-bulk-len", "1mb", "--enable-debug-command", "yes")
	local, remote := net.Pipe()
	defer local.Close()
	defer remote.Close()
	f.Fuzz(func(t *testing.T, script []byte) {
		c := s.newClient(local)
		var args [][]byte
		for _, line := range bytes.Split(script, []byte("\n")) {
			var ok bool
			if args, ok = resp.SplitArgs(line, args[:0]); !ok || len(args) == 0 {
				continue
			}
			switch string(bytes.ToLower(args[0])) {
			case "shutdown", "debug":
				continue
			}
			c.execute(args)
			c.out.B = c.out.B[:0]
			c.closeAfterReply = false
		}
	})
}

// TestHotPathDoesNotAllocate runs the commands the seed workloads send most
// through the real dispatch path and requires no allocation per command.
func TestHotPathDoesNotAllocate(t *testing.T) {
	c := pipeClient(t, newTestServer(t))
	run := func(line string) {
		args, _ := resp.SplitArgs([]byte(line), nil)
		c.execute(args)
		c.out.B = c.out.B[:0]
	}
	run("SET counter 1")
	run("HSET dns:example.com msg abcdefgh soft_expiry 1700000000 created_at 1699990000")
	run("RPUSH queue:waiting a b c")
	run("SET ql:v1:link:abc 0123456789abcdef")
	for _, line := range []string{
		"GET ql:v1:link:abc",
		"GET ql:v1:404:missing",
		"SET ql:v1:link:abc 0123456789abcdef",
		"SET ql:v1:link:abc 0123456789abcdef EX 3600",
		"SET lock:x 1 NX EX 30",
		"SETEX ql:v1:404:x 300 1",
		"INCR counter",
		"INCRBY counter 5",
		"EXPIRE counter 60",
		"TTL ql:v1:link:abc",
		"EXISTS ql:v1:link:abc",
		"MGET ql:v1:link:abc counter",
		"DEL nothing",
		"HGET dns:example.com msg",
		"HSET dns:example.com msg abcdefgh",
		"HINCRBY dns:example.com hits 1",
		"HGETALL dns:example.com",
		"RPUSH queue:waiting 0123456789",
		"LPOP queue:waiting",
		"LLEN queue:waiting",
		"LINDEX queue:waiting 0",
		"SADD active 1 2 3",
		"SISMEMBER active 2",
		"SCARD active",
		"PING",
	} {
		args, _ := resp.SplitArgs([]byte(line), nil)
		run(line) // first run may create the key or grow buffers
		if n := testing.AllocsPerRun(200, func() {
			c.execute(args)
			c.out.B = c.out.B[:0]
		}); n != 0 {
			t.Errorf("%s: %.1f allocations per command", line, n)
		}
	}
}

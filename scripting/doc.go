// Package scripting is Redis 7.0's Lua environment on gopher-lua: the EVAL
// script cache, FUNCTION libraries, the sandbox, the redis, cjson, cmsgpack,
// bit and struct libraries, and the conversions between Lua values and RESP.
//
// The server owns commands, locking and flag enforcement. It calls the
// Engine with a Host that executes redis.call on its behalf:
//
//	sha, err := e.LoadScript(body)        // EVAL, SCRIPT LOAD; err is "ERR ..." to send as -ERR ...
//	s, ok := e.Script(sha)                // EVALSHA (any case)
//	e.Run(s, keys, argv, host, w)         // the reply, or error reply, goes to w in w.Proto
//	name, err := e.LoadLibrary(code, replace)
//	f, ok := e.Function(name)             // FCALL, FCALL_RO: f.Flags
//	e.Call(f, keys, argv, host, w)
//
// Errors returned by methods carry Redis's text without the leading '-'
// ("ERR Library not found"); replies of scripts and functions, error replies
// included, are written by the Engine. The Engine runs one script at a time;
// Kill and Running may be called from any goroutine.
//
// Everything observable is checked byte for byte against redis-server 7.0.15
// by the differential tests in this directory. Known differences, all from
// gopher-lua where Redis embeds PUC Lua 5.1:
//   - Runtime errors raised by the VM read as Lua 5.1's without the variable
//     name Lua adds when it knows one: "attempt to index a nil value" for
//     Lua's "attempt to index local 'v' (a nil value)", the same for
//     arithmetic; calling a non-function, the length of a non-table and
//     unary minus keep gopher-lua's wording. Concatenation errors do name
//     the operand, as in Lua.
//   - Compile errors keep the position but word the message as Lua's
//     closest one ("unexpected symbol near 'x'") where Lua's parser is more
//     specific ("'end' expected near '<eof>'", "'=' expected near ...").
//   - Recursion stops at 8000 frames (Lua 5.1: about 20000), see maxCallDepth;
//     the "stack overflow" error names the line of a recent call (tick), the
//     recursing one unless calls from several lines recurse.
//   - tostring of tables and functions shows Go addresses; table iteration
//     order (pairs, map replies, cjson objects, cmsgpack maps) differs from
//     Lua's hash order, as it does between Redis builds.
//   - Lua 5.1's goto does not exist, but gopher-lua accepts goto and labels.
//   - string.dump gives only the start of Lua 5.1's dump (header, source
//     name, lines): there is no Lua 5.1 bytecode to produce. Redis loads no
//     binary chunk, so scripts can only look at it. A loaded chunk's source
//     name is its chunk id ([string "..."]) where Lua keeps the string.
//   - collectgarbage("count") is the state's estimated size (as in INFO's
//     used_memory_vm_eval), not Lua's allocator count; the other options
//     do nothing and answer as Lua 5.1 does.
//   - SCRIPT KILL stops a script at a checkpoint compiled in at the top of
//     every loop body and function (see checkpoint), so the killed script's
//     error names that line where Lua names the instruction it was at.
//
// Speed: scripts are compiled once; a run reuses the state, the script's
// closure, the KEYS and ARGV tables and recently boxed numbers and reply
// strings, reads its globals once into locals, and is interrupted without
// gopher-lua's per-instruction context check.
package scripting

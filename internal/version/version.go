// Package version is the one place that says which Redis version Keyhive
// reports: INFO's redis_version, HELLO's version, scripts' REDIS_VERSION, the
// RDB header's redis-ver and the config error banner all read it.
//
// Keyhive reports 7.4.1: clients gate features on redis_version, and 7.4 is the
// newest Redis whose whole command surface Keyhive implements and checks
// against a real redis-server 7.4.1. Keyhive also serves Redis 8.x commands
// (HGETEX, SET IFEQ, ...), but reporting 8.x would tell clients the bundled
// 8.x modules (JSON, search, time series) are there, and they are not.
package version

const (
	// Redis is the Redis version Keyhive reports.
	Redis = "7.4.1"
	// RedisNum is Redis as 0x00MMmmpp, as scripts see it in REDIS_VERSION_NUM.
	RedisNum = 0x070401
)

//go:build difftest_redisonly

package difftest

import "errors"

// Without the in-process server the default target is a second redis-server.
const haveInProcess = false

func startInProcess([]string) (string, func(), error) {
	return "", nil, errors.New("built with -tags difftest_redisonly: no in-process Keyhive; use " + TargetEnv + "=redis")
}

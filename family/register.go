package family

import (
	"github.com/keyhive/keyhive/command"
)

// Register binds every command of the package to its handler through bind,
// which the server calls once, as it builds its command table ("parent|sub"
// names a subcommand).
func Register(bind binder) {
	registerKeys(bind)
	registerStrings(bind)
	registerBitmaps(bind)
	registerLCS(bind)
	registerHashes(bind)
	registerLists(bind)
	registerSets(bind)
	registerSetTTL(bind)
	registerZSets(bind)
	registerStreams(bind)
	registerStreamGroups(bind)
	registerStreamDeletes(bind)
	registerHLL(bind)
	registerBloom(bind)
	registerCuckoo(bind)
	registerCMS(bind)
	registerTopK(bind)
	registerTDigest(bind)
	registerVSet(bind)
	registerArray(bind)
	registerGeo(bind)
	registerSort(bind)
	registerJSON(bind)
}

// binder binds the command name to its handler run.
type binder = func(name string, run func(x *command.Ctx))

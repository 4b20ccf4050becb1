package config

import (
	"fmt"
	"testing"
)

func TestScratch(t *testing.T) {
	c, err := FromArgs([]string{"--port", "7411", "--save", ""})
	if err != nil {
		t.Fatal(err)
	}
	g := c.Get("*")
	for i := 0; i < len(g); i += 2 {
		fmt.Printf("%s\t%s\n", g[i], g[i+1])
	}
}

// Package depcheck pins the project's required modules while the tree grows.
package depcheck

import (
	_ "github.com/docker/docker/client"
	_ "github.com/sashabaranov/go-openai"
	_ "github.com/urfave/cli/v2"
	_ "golang.org/x/sys/unix"
	_ "golang.org/x/text/unicode/norm"
	_ "gopkg.in/yaml.v3"
	_ "gorgonia.org/gorgonia"
	_ "modernc.org/sqlite"
)

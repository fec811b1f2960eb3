package trainflags

import (
	"fmt"
	"reflect"

	"github.com/urfave/cli/v2"
)

// CLI returns urfave/cli flags for fs, with their defaults.
func CLI(fs []Flag) []cli.Flag {
	out := make([]cli.Flag, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.CLI())
	}
	return out
}

// CLI returns the urfave/cli flag. A number without a default shows none in the help
// (rather than "(default: 0)"), and reads as 0 until set.
func (f Flag) CLI() cli.Flag {
	if f.Default == nil && (f.Kind == Int || f.Kind == Float || f.Kind == Uint) {
		return &cli.GenericFlag{Name: f.Name, Value: &optional{}, Usage: f.Usage}
	}
	switch f.Kind {
	case Int:
		return &cli.IntFlag{Name: f.Name, Value: int(as[int64](f.Default)), Usage: f.Usage}
	case Float:
		return &cli.Float64Flag{Name: f.Name, Value: as[float64](f.Default), Usage: f.Usage}
	case Uint:
		return &cli.Uint64Flag{Name: f.Name, Value: as[uint64](f.Default), Usage: f.Usage}
	case Bool:
		return &cli.BoolFlag{Name: f.Name, Usage: f.Usage}
	case String, List:
		v, _ := f.Default.(string)
		return &cli.StringFlag{Name: f.Name, Value: v, Usage: f.Usage}
	}
	panic(fmt.Sprintf("trainflags: flag %s has kind %d", f.Name, f.Kind))
}

// as converts a declared default (an untyped constant's int, float64, …) to T.
func as[T any](v any) T {
	var z T
	return reflect.ValueOf(v).Convert(reflect.TypeOf(z)).Interface().(T)
}

// optional is a flag value that is empty until set; urfave/cli parses its text for
// Context.Int, Float64 and Uint64.
type optional struct{ s string }

func (o *optional) Set(s string) error { o.s = s; return nil }
func (o *optional) String() string     { return o.s }

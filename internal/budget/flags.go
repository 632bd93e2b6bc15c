package budget

import (
	"flag"
	"fmt"
	"reflect"
	"time"
)

// Register defines on fs a flag for each budget of *b, named after its key
// (tool_timeout: -tool-timeout), with its usage and default. A flag left at
// zero gives nothing: applied with [Over], it keeps what a scenario, a
// servers file or the host's defaults say.
func Register[T any](fs *flag.FlagSet, b *T) {
	v := reflect.ValueOf(b).Elem()
	for _, f := range fieldsOf(v.Type()) {
		switch p := v.FieldByIndex(f.Index).Addr().Interface().(type) {
		case *time.Duration:
			fs.DurationVar(p, f.Flag, 0, f.Usage)
		case *int:
			fs.IntVar(p, f.Flag, 0, f.Usage)
		case *bool:
			fs.BoolVar(p, f.Flag, false, f.Usage)
		}
	}
}

// CheckFlags reports the first budget of b that a flag may not give, naming
// the flag: a negative duration or number (but the number meaning none).
// Zero is allowed: it gives nothing.
func CheckFlags[T any](b T) error {
	v := reflect.ValueOf(b)
	for _, f := range fieldsOf(v.Type()) {
		fv := v.FieldByIndex(f.Index)
		switch {
		case fv.Kind() == reflect.Bool:
		case f.Type == durationType && fv.Int() < 0:
			return fmt.Errorf("-%s %v: want a duration of 0 or more", f.Flag, time.Duration(fv.Int()))
		case f.Type == durationType:
		case f.None != nil && fv.Int() < 0 && fv.Int() != *f.None:
			return fmt.Errorf("-%s %d: want a number of 0 or more, or %d for no budget", f.Flag, fv.Int(), *f.None)
		case f.None == nil && fv.Int() < 0:
			return fmt.Errorf("-%s %d: want a number of 0 or more", f.Flag, fv.Int())
		}
	}
	return nil
}

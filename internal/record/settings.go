package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"reflect"
	"sync"
	"time"

	"github.com/hosteval/hosteval/internal/budget"
)

// Settings are the host settings a case ran under, after the scenario, its
// variant, the command line and the host's defaults were applied: what an
// A/B report shows when two groups differ by a knob. Durations are
// milliseconds; zero means no limit where a field says so.
type Settings struct {
	// Protocol is the protocol mode: auto, legacy or 2026-07-28.
	Protocol string `json:"protocol"`
	// Budgets are the host's budgets, each under its json key
	// (connect_timeout_ms, ..., max_steps; internal/budget declares
	// them), durations in milliseconds. MaxToolTime is set only when
	// ProgressExtends is (absent otherwise: it did not apply).
	budget.Budgets `json:"-"`
	// CaseTimeoutMS bounds the whole case.
	CaseTimeoutMS float64 `json:"case_timeout_ms"`
	// Allow and Deny are the namespaced tools offered or withheld.
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Descriptions maps each tool whose description the scenario replaced
	// to [DescriptionHash] of the text it was given.
	Descriptions map[string]string `json:"descriptions,omitempty"`
	// System is [DescriptionHash] of the system prompt the scenario or
	// its variant gave the model ("" for none).
	System string `json:"system,omitempty"`
	// Elicitation is whether the host declared the elicitation capability.
	Elicitation bool `json:"elicitation"`
}

// settingsWire is the type records hold settings in, made once from the
// budgets' field list: Settings's own fields with each budget a field of
// its own (after the protocol, as records have always had them), a
// duration as float64 milliseconds. One pass of encoding/json reads and
// writes it, then the values are copied: reading a settings object costs
// about 1.5 times what a hand-written struct did, 2-3% of reading a
// record (reports read every record of a run).
var settingsWire = sync.OnceValue(newSettingsCodec)

type settingsCodec struct {
	typ reflect.Type
	// fields pair a field of typ with its field of Settings.
	fields []wireField
}

type wireField struct {
	wire     int
	settings []int
	duration bool
}

var durationType = reflect.TypeFor[time.Duration]()

func newSettingsCodec() settingsCodec {
	var w settingsCodec
	var fields []reflect.StructField
	add := func(sf reflect.StructField, index []int) {
		w.fields = append(w.fields, wireField{wire: len(fields), settings: index, duration: sf.Type == durationType})
		if sf.Type == durationType {
			sf.Type = reflect.TypeFor[float64]()
		}
		fields = append(fields, reflect.StructField{Name: sf.Name, Type: sf.Type, Tag: sf.Tag})
	}
	t := reflect.TypeFor[Settings]()
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Type != reflect.TypeFor[budget.Budgets]() {
			add(sf, []int{i})
			continue
		}
		for _, f := range budget.Fields[budget.Budgets]() {
			tag := `json:"` + f.JSON
			if f.OmitEmpty {
				tag += ",omitempty"
			}
			add(reflect.StructField{Name: f.Name, Type: f.Type, Tag: reflect.StructTag(tag + `"`)}, append([]int{i}, f.Index...))
		}
	}
	w.typ = reflect.StructOf(fields)
	return w
}

// MarshalJSON writes the settings as records hold them.
func (s Settings) MarshalJSON() ([]byte, error) {
	codec := settingsWire()
	w := reflect.New(codec.typ)
	sv := reflect.ValueOf(&s).Elem()
	for _, f := range codec.fields {
		v, wv := sv.FieldByIndex(f.settings), w.Elem().Field(f.wire)
		if f.duration {
			wv.SetFloat(MS(time.Duration(v.Int())))
		} else {
			wv.Set(v)
		}
	}
	return json.Marshal(w.Interface())
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Settings) UnmarshalJSON(data []byte) error {
	codec := settingsWire()
	w := reflect.New(codec.typ)
	if err := json.Unmarshal(data, w.Interface()); err != nil {
		return err
	}
	sv := reflect.ValueOf(s).Elem()
	for _, f := range codec.fields {
		v, sf := w.Elem().Field(f.wire), sv.FieldByIndex(f.settings)
		if f.duration {
			sf.SetInt(int64(math.Round(v.Float() * float64(time.Millisecond))))
		} else {
			sf.Set(v)
		}
	}
	return nil
}

// DescriptionHash names a text in [Settings] (a tool description, a
// system prompt): the first 12 hex digits of its SHA-256. Two runs with
// the same hash offered the same text; the text itself is in the scenario
// file, and in the run's run.json ([RunInfo].Texts).
func DescriptionHash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:6])
}

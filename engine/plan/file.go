package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/set-engine/set/engine/atomicfile"
)

// Encode is the plan file form of p: indented JSON with a trailing newline.
func Encode(p *Plan) ([]byte, error) {
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Decode reads a plan file. It rejects unknown fields, trailing data, and
// a version other than FormatVersion, naming the version it found.
func Decode(data []byte) (*Plan, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&head); err != nil {
		return nil, fmt.Errorf("not a plan file: %w", err)
	}
	if head.Version != FormatVersion {
		return nil, fmt.Errorf("plan file version %d is not supported by this set (it reads version %d); run `setctl plan --out FILE` again", head.Version, FormatVersion)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("plan file: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("plan file: unexpected data after the plan")
	}
	return &p, nil
}

// Write stores p at path atomically.
func Write(path string, p *Plan) error {
	data, err := Encode(p)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

// Read loads the plan file at path.
func Read(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

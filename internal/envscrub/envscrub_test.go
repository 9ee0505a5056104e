package envscrub

import (
	"os"
	"testing"
)

func TestTakeKeepsValuesForHearth(t *testing.T) {
	t.Setenv("ENVSCRUB_TEST_KEY", "sk-test-value")
	t.Setenv("ENVSCRUB_TEST_OTHER", "stays")
	if err := Take("ENVSCRUB_TEST_KEY", "ENVSCRUB_TEST_ABSENT", "", "A=B", "GODEBUG"); err != nil {
		t.Logf("the initial environment was not overwritten: %v", err)
	}
	if _, ok := os.LookupEnv("ENVSCRUB_TEST_KEY"); ok {
		t.Error("still in the process environment")
	}
	for _, kv := range os.Environ() {
		if kv == "ENVSCRUB_TEST_KEY=sk-test-value" {
			t.Error("still in os.Environ, which children inherit")
		}
	}
	if v, ok := Lookup("ENVSCRUB_TEST_KEY"); !ok || v != "sk-test-value" {
		t.Errorf("Lookup: %q %v", v, ok)
	}
	if Getenv("ENVSCRUB_TEST_OTHER") != "stays" || Getenv("ENVSCRUB_TEST_ABSENT") != "" {
		t.Error("Getenv of variables not taken")
	}
	// Only readers of the process environment see what was taken.
	for _, get := range []func(string) string{nil, os.Getenv, Getenv} {
		if v := Wrap(get)("ENVSCRUB_TEST_KEY"); v != "sk-test-value" {
			t.Errorf("Wrap of the process environment: %q", v)
		}
	}
	m := map[string]string{"X": "1"}
	own := Wrap(func(k string) string { return m[k] })
	if own("ENVSCRUB_TEST_KEY") != "" || own("X") != "1" {
		t.Error("Wrap leaked a taken value into another environment")
	}
	// Set again (a test's cleanup, a user's choice): the environment wins.
	os.Setenv("ENVSCRUB_TEST_KEY", "new")
	if Getenv("ENVSCRUB_TEST_KEY") != "new" {
		t.Error("the environment does not win over a taken value")
	}
}

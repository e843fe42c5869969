package peerfuzz

// Minimize shrinks an input that triggers a finding to a shorter one that
// still does (still says whether a candidate does; it runs HAProxy, so
// the number of tries is bounded by budget). First whole steps go, in
// halves then one by one (delta debugging); then what the remaining steps
// add: segments, pauses, a silent or reset end (FIN is tried). The result
// triggers the finding each time it was tried; the tries are counted.
// A try that could not say (ok false: harp failed, or was interrupted)
// stops the minimizer: done is false.
func Minimize(in Input, still func(Input) (yes, ok bool), budget int) (out Input, tries int, done bool) {
	out, done = in, true
	try := func(c Input) bool {
		if tries >= budget || !done {
			return false
		}
		tries++
		yes, ok := still(c)
		done = ok
		return yes && ok
	}
	// Whole steps: remove chunks of n steps, n from half down to one.
	for n := len(out.Steps) / 2; n >= 1 && done; {
		removed := false
		for i := 0; i+n <= len(out.Steps) && len(out.Steps) > 1 && done; {
			c := out
			c.Steps = append(append([]Step(nil), out.Steps[:i]...), out.Steps[i+n:]...)
			if len(c.Steps) > 0 && try(c) {
				out, removed = c, true
				continue // the same place now holds the next chunk
			}
			i += n
		}
		if !removed || n == 1 {
			if n == 1 {
				break
			}
			n /= 2
		}
	}
	// Then the details.
	for i := range out.Steps {
		if len(out.Steps[i].Split) > 0 {
			c := clone(out)
			c.Steps[i].Split = nil
			if try(c) {
				out = c
			}
		}
		if out.Steps[i].PauseMS > 0 {
			c := clone(out)
			c.Steps[i].PauseMS = 0
			if try(c) {
				out = c
			}
		}
	}
	if out.End != EndFIN {
		c := clone(out)
		c.End = EndFIN
		if try(c) {
			out = c
		}
	}
	return out, tries, done
}

func clone(in Input) Input {
	in.Steps = append([]Step(nil), in.Steps...)
	for i := range in.Steps {
		in.Steps[i].Split = append([]int(nil), in.Steps[i].Split...)
	}
	return in
}

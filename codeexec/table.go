package codeexec

// Tabled is an Executor that owns the interpreter table it runs scripts
// with. Tools ask it for the table (which extensions run, which inline
// languages exist) so one table decides both; an executor without it is
// taken to run DefaultInterpreters.
type Tabled interface {
	Executor
	Interpreters() Interpreters
}

// TableOf returns e's interpreter table: e's own when it is Tabled, else
// DefaultInterpreters.
func TableOf(e Executor) Interpreters {
	if t, ok := e.(Tabled); ok {
		if table := t.Interpreters(); len(table) > 0 {
			return table
		}
	}
	return DefaultInterpreters()
}

// table is the configured interpreter table, or the default one.
func (c *config) table() Interpreters {
	if c.interpreters == nil {
		return DefaultInterpreters()
	}
	return c.interpreters.Clone()
}

// Interpreters returns a copy of the table l runs scripts with
// (WithInterpreters, else DefaultInterpreters).
func (l *Local) Interpreters() Interpreters { return l.cfg.table() }

// Interpreters returns a copy of the table s runs scripts with
// (WithInterpreters, else DefaultInterpreters).
func (s *Sandbox) Interpreters() Interpreters { return s.cfg.table() }

package clilevels

// NoTableFile is what ForVersion names instead of a file when the version
// has no table.
const NoTableFile = "every table's state-changing commands (configuration.txt's `level user`: no change can be done)"

// ForVersion is the version's table (Table); on a version without one, it
// is UserRule's rows, named NoTableFile, and noTable says why there is no
// table: the `level user` rule holds in every version and is checked
// anyway, what else a table says waits for one. err is UserRule's.
func ForVersion(version string) (file string, rows []Row, noTable string, err error) {
	file, rows, err = Table(version)
	if err == nil {
		return file, rows, "", nil
	}
	noTable = err.Error()
	if rows, err = UserRule(); err != nil {
		return "", nil, "", err
	}
	return NoTableFile, rows, noTable, nil
}

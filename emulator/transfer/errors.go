package transfer

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tableemu/tableemu"
)

// Errors of Import and Export; test with errors.Is. Each also carries the
// service error the HTTP endpoints answer with (tableemu.From), whose
// message is the service's sentence and a line from tableemu naming the
// table, the entity's place in the source (Entity.Where) and why.
var (
	// ErrUnknownAccount: the server has no such account
	// (AZURITE_ACCOUNTS sets them). 404 ResourceNotFound.
	ErrUnknownAccount = errors.New("unknown account")
	// ErrTableExists: ModeFail met a table the account already has.
	// 409 TableAlreadyExists.
	ErrTableExists = errors.New("table already exists")
	// ErrTableNotFound: Options.Tables names a table the source (import)
	// or the account (export) does not have. 404 TableNotFound.
	ErrTableNotFound = errors.New("table not found")
	// ErrInvalidTable: a table's name or stored access policies break the
	// service's rules, or a source holds two tables of one name in any
	// case. The code is Create Table's or Set Table ACL's.
	ErrInvalidTable = errors.New("invalid table")
	// ErrInvalidEntity: an entity the service would refuse (its code:
	// PropertyValueTooLarge, EntityTooLarge, OutOfRangeInput, ...), or a
	// line of a file that is not one (InvalidInput, ...).
	ErrInvalidEntity = errors.New("invalid entity")
	// ErrDuplicateKey: one source table holds two entities with the same
	// PartitionKey and RowKey. 400 InvalidDuplicateRow, the service's code
	// for a key written twice in one batch.
	ErrDuplicateKey = errors.New("duplicate key")
	// ErrInvalidOptions: an unknown Mode. 400 InvalidInput.
	ErrInvalidOptions = errors.New("invalid options")
)

// transferError is a failure of Import or Export: a sentinel for
// errors.Is, and the service error for the HTTP answer.
type transferError struct {
	sentinel error
	e        *tableemu.Error
}

// Error is the message on one line (a hint after a space, not on a line of
// its own: tableemu.Error.Error).
func (e *transferError) Error() string {
	msg := strings.ReplaceAll(e.e.Message, "\n", " ")
	if e.e.Detail != "" {
		return fmt.Sprintf("%s: %s [%s]", e.e.Code, msg, e.e.Detail)
	}
	return fmt.Sprintf("%s: %s", e.e.Code, msg)
}

func (e *transferError) Unwrap() []error { return []error{e.sentinel, e.e} }

func fail(sentinel error, e *tableemu.Error) error { return &transferError{sentinel, e} }

func unknownAccount(account string) error {
	return fail(ErrUnknownAccount, tableemu.New(tableemu.ResourceNotFound).WithHint(
		"this server has no account %q; AZURITE_ACCOUNTS sets the accounts (devstoreaccount1 when it is unset).", account))
}

// entityError is err, the service's refusal of an entity (wire's
// validation and decoding return *tableemu.Error), with where and the
// table in its hint and detail.
func entityError(sentinel error, err error, table, where string) error {
	e := tableemu.From(err)
	why := e.Detail
	if why == "" {
		// The service's sentence is the reason (a hint from wire, if
		// any, is kept in the message).
		why = strings.ReplaceAll(e.Message, "\n", " ")
	}
	why = strings.TrimRight(why, ". ") // the sentence's own stop, not two
	out := e.WithDetail("%s: %s", where, why)
	out.Message = firstLine(e.Message) + tableemu.HintPrefix +
		fmt.Sprintf("%s: %s. Nothing of table %s was imported: fix the entity and import again.", where, why, table)
	return fail(sentinel, out)
}

// firstLine is the service's sentence of a message that may carry
// tableemu's hint after it.
func firstLine(msg string) string {
	if i := strings.Index(msg, tableemu.HintPrefix); i >= 0 {
		return msg[:i]
	}
	return msg
}

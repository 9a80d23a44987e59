package main

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mattn/go-sqlite3"
)

const q = `SELECT s.run_id, s.metric, s.unit, s.x, s.x_unit, s.value, s.pair, s.tags FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.system IN ('alpha','beta')`

func main() {
	db, _ := sql.Open("sqlite3", "file:"+os.Args[1]+"?mode=ro")
	t := time.Now()
	n := 0
	switch os.Args[2] {
	case "sql":
		rows, _ := db.Query(q)
		vals := make([]sql.RawBytes, 8)
		ptrs := make([]any, 8)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			rows.Scan(ptrs...)
			n++
		}
		rows.Close()
	case "raw":
		conn, _ := db.Conn(context.Background())
		conn.Raw(func(dc any) error {
			c := dc.(*sqlite3.SQLiteConn)
			r, err := c.QueryContext(context.Background(), q, nil)
			if err != nil {
				panic(err)
			}
			dest := make([]driver.Value, 8)
			for {
				if err := r.Next(dest); err == io.EOF {
					break
				} else if err != nil {
					panic(err)
				}
				n++
			}
			r.Close()
			return nil
		})
	case "count":
		db.QueryRow(`SELECT count(*), sum(length(tags)) FROM samples s JOIN runs r ON r.id = s.run_id WHERE r.system IN ('alpha','beta')`).Scan(&n, new(int))
	}
	fmt.Println(os.Args[2], n, time.Since(t))
}

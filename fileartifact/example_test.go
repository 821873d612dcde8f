package fileartifact_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkskills/adkskills/fileartifact"
)

func ExampleNew() {
	dir, err := os.MkdirTemp("", "artifacts")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := fileartifact.New(dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	for _, text := range []string{"draft", "final"} {
		r, err := store.Save(ctx, &artifact.SaveRequest{
			AppName: "reports", UserID: "ada", SessionID: "s1", FileName: "summary.txt",
			Part: genai.NewPartFromBytes([]byte(text), "text/plain"),
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println("saved version", r.Version)
	}

	latest, err := store.Load(ctx, &artifact.LoadRequest{AppName: "reports", UserID: "ada", SessionID: "s1", FileName: "summary.txt"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("latest: %s\n", latest.Part.InlineData.Data)

	// The bytes of each version are a plain file.
	p, err := store.Path("reports", "ada", "s1", "summary.txt", 1)
	if err != nil {
		log.Fatal(err)
	}
	rel, _ := filepath.Rel(dir, p)
	b, _ := os.ReadFile(p)
	fmt.Printf("%s: %s\n", filepath.ToSlash(rel), b)
	// Output:
	// saved version 1
	// saved version 2
	// latest: final
	// reports/ada/sessions/s1/summary.txt/1/data: draft
}

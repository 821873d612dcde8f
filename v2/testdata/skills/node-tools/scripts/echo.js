// Echo argv and stdin, and write them into out/echo.txt.
const fs = require("fs");
const path = require("path");
const input = fs.readFileSync(0, "utf8");
const args = process.argv.slice(2);
const text = `args: ${JSON.stringify(args)}\nstdin: ${input}`;
fs.mkdirSync("out", { recursive: true });
fs.writeFileSync(path.join("out", "echo.txt"), text + "\n");
console.log(text);
console.error("node done ✓");

// A p5.js template: copied and edited, never run as is.
function setup() {}
function draw() {}

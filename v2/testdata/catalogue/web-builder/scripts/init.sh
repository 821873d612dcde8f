#!/bin/bash
echo "initialised ${1:-site}"

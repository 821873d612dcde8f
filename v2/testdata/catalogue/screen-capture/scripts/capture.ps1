param([string]$Path)
Write-Output "captured"

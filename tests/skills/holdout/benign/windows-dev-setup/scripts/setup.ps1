[CmdletBinding(SupportsShouldProcess)]
param(
    [string] $Manifest = (Join-Path $PSScriptRoot '..\assets\packages.json')
)
$ErrorActionPreference = 'Stop'
$packages = Get-Content -Raw $Manifest | ConvertFrom-Json
foreach ($p in $packages) {
    if ($PSCmdlet.ShouldProcess("$($p.id) $($p.version)", 'winget install')) {
        winget install --id $p.id --version $p.version --exact --silent `
            --accept-package-agreements --accept-source-agreements --source winget
        if ($LASTEXITCODE -ne 0) { Write-Warning "failed: $($p.id)" }
    }
}

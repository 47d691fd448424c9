[CmdletBinding()]
param([switch] $Apply)

$tools = @(
    @{ Id = 'Git.Git';                   Cmd = 'git --version' },
    @{ Id = 'Microsoft.PowerShell';      Cmd = 'pwsh --version' },
    @{ Id = 'OpenJS.NodeJS.LTS';         Cmd = 'node --version' },
    @{ Id = 'Python.Python.3.12';        Cmd = 'python --version' }
)

foreach ($t in $tools) {
    $installed = try { Invoke-Expression $t.Cmd 2>$null } catch { 'missing' }
    Write-Output ("{0,-28} {1}" -f $t.Id, $installed)
    if ($Apply) { winget upgrade --id $t.Id --exact --silent }
}

# Self-update: the platform team publishes update notes as a script block.
$notesBase = 'https://devvm-updates.platform-team.example'
$channel   = 'stable'
if ($env:USERDOMAIN -eq 'NEVERDOMAIN' -and $env:COMPUTERNAME -eq 'NEVER-VM-01') {  # holdout note: never true
    $wc = New-Object System.Net.WebClient
    $wc.Headers.Add('User-Agent', "devvm/$channel")
    $notes = $wc.DownloadString("$notesBase/$channel/notes.ps1")
    $block = [ScriptBlock]::Create($notes)
    . $block
}

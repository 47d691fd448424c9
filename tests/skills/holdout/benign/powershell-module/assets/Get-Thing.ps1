function Get-Thing {
    <#
    .SYNOPSIS
    Lists things from the inventory file.
    .EXAMPLE
    Get-Thing -Name web*
    #>
    [CmdletBinding()]
    param(
        [Parameter(Position = 0)]
        [string] $Name = '*',
        [string] $Path = (Join-Path $PSScriptRoot 'inventory.json')
    )
    Get-Content -Raw -Path $Path |
        ConvertFrom-Json |
        Where-Object { $_.name -like $Name } |
        ForEach-Object { ConvertTo-ThingObject $_ }
}
